"""Empirical privacy audits: check a mechanism's claim by hypothesis testing.

A mechanism that is f-DP cannot be told apart from neighbouring inputs more
easily than ``f`` allows: for every test of ``M(x)`` against ``M(x')`` with
type I error ``1 - alpha`` the type II error is at least ``f(alpha)``
(Dong, Roth & Su 2022; Cho & Awan, Sec. 2.2).  The audit draws releases from
both inputs, runs every threshold test on a scalar statistic, bounds its two
error rates with Clopper-Pearson intervals, and reports the largest violation
of ``f``.  It passes unless some test is *significantly* better than ``f``
allows (after a Bonferroni correction over the thresholds), so a correct
mechanism passes with probability at least ``1 - significance``.

The audit does not prove privacy; it catches claims that are wrong by more
than the sampling error, e.g. a noise scale off by a factor of two.

Helpers for the inputs of an audit:

* :func:`neighbour_from_space` -- for semi-DP (Cho & Awan, Def. 13), an
  invariant-conforming neighbour ``x + v`` at the semi-adjacent distance,
  with ``v`` a worst (largest-norm) vector of the sensitivity space;
* :func:`projection_statistic` and :func:`likelihood_ratio_statistic` --
  scalar statistics of multivariate releases: the projection on the
  difference of the two inputs (optimal for spherical Gaussian noise) or the
  log likelihood ratio of the noise law (optimal for any law with a density,
  by the Neyman-Pearson lemma);
* :func:`zcdp_tradeoff` -- the tradeoff function implied by rho-zCDP, to
  audit zCDP claims (the discrete Gaussian mechanism);
* ``batched=True`` in :func:`audit_mechanism` -- a sampler that returns many
  releases per call (e.g. an additive mechanism applied to ``n`` copies of a
  scalar query), which makes audits with 10^4-10^5 releases fast.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ._results import format_table
from ._rng import as_generator
from ._validation import (
    InvariantDPError,
    check_finite_array,
    check_in_open_unit,
    check_positive,
    check_positive_int,
)
from .privacy.tradeoff import TradeoffFunction, as_tradeoff

__all__ = [
    "AuditResult",
    "audit_mechanism",
    "audit_samples",
    "likelihood_ratio_statistic",
    "neighbour_from_space",
    "projection_statistic",
    "zcdp_tradeoff",
]


@dataclass(frozen=True)
class AuditResult:
    """Outcome of a privacy audit.

    Attributes
    ----------
    passed : bool
        False when some threshold test beats the claimed tradeoff function
        significantly.
    max_violation : float
        Largest point estimate of ``f(1 - type I) - type II`` over the tests
        (negative or near 0 for a correct claim).
    significant_violation : float
        Largest ``f(1 - type I upper bound) - type II upper bound``; positive
        means a significant violation.
    worst_type1, worst_type2 : float
        Estimated error rates of the test with the largest violation.
    n_samples : int
        Releases drawn from each input.
    n_tests : int
        Number of threshold tests examined.
    claim : str
        The tradeoff function audited.
    significance : float
        Family-wise level of the audit.
    """

    passed: bool
    max_violation: float
    significant_violation: float
    worst_type1: float
    worst_type2: float
    n_samples: int
    n_tests: int
    claim: str
    significance: float

    def summary(self) -> str:
        rows = [
            ("claim", self.claim),
            ("releases per input", self.n_samples),
            ("threshold tests", self.n_tests),
            ("largest violation f(1-a)-b (estimate)", self.max_violation),
            ("largest significant violation", self.significant_violation),
            ("worst test: type I, type II", f"{self.worst_type1:.4g}, {self.worst_type2:.4g}"),
            ("family-wise significance", self.significance),
            ("verdict", "pass" if self.passed else "FAIL: claim violated"),
        ]
        return format_table("Empirical privacy audit", rows)


def _cp_upper(k: np.ndarray, n: int, level: float) -> np.ndarray:
    """One-sided Clopper-Pearson upper bounds for ``k`` successes in ``n``."""
    k = np.asarray(k, dtype=float)
    out = np.ones_like(k)
    ok = k < n
    out[ok] = stats.beta.ppf(1.0 - level, k[ok] + 1.0, n - k[ok])
    return out


def _threshold_tests(s0: np.ndarray, s1: np.ndarray):
    """Error counts of all tests ``reject when s > c`` (and ``s < c``).

    Thresholds run over the pooled sample values, so ties in discrete
    statistics are handled by the tests that are actually achievable.
    Returns ``(type1_counts, type2_counts)`` for both directions.
    """
    s0 = np.sort(s0)
    s1 = np.sort(s1)
    cuts = np.unique(np.concatenate([s0, s1]))
    # "reject H0 (input x) when s > c": type I = #{s0 > c}, type II = #{s1 <= c}
    t1_up = s0.size - np.searchsorted(s0, cuts, side="right")
    t2_up = np.searchsorted(s1, cuts, side="right")
    # "reject when s < c": type I = #{s0 < c}, type II = #{s1 >= c}
    t1_dn = np.searchsorted(s0, cuts, side="left")
    t2_dn = s1.size - np.searchsorted(s1, cuts, side="left")
    return np.concatenate([t1_up, t1_dn]), np.concatenate([t2_up, t2_dn])


def audit_samples(
    sample_x, sample_x_prime, claimed, *, significance=0.01, max_tests=400
) -> AuditResult:
    """Audit a claim from releases already drawn from two neighbouring inputs.

    Parameters
    ----------
    sample_x, sample_x_prime : array_like, shape (n,)
        A scalar statistic of ``n`` independent releases from each input.
    claimed : TradeoffFunction or callable
        The tradeoff function ``f`` the mechanism claims (paper convention:
        ``f(alpha)`` is the least type II error at type I error ``1 - alpha``).
    significance : float
        Family-wise probability of failing a correct mechanism.
    max_tests : int
        Thresholds are thinned to at most this many per direction (quantiles
        of the pooled sample), which keeps the Bonferroni correction mild.

    Returns
    -------
    AuditResult
    """
    f = as_tradeoff(claimed)
    significance = check_in_open_unit("significance", significance)
    s0 = np.asarray(sample_x, dtype=float).ravel()
    s1 = np.asarray(sample_x_prime, dtype=float).ravel()
    if s0.size != s1.size or s0.size < 10:
        raise InvariantDPError(
            "`sample_x` and `sample_x_prime` must have the same size, at least 10 "
            f"(got {s0.size} and {s1.size})."
        )
    if not (np.all(np.isfinite(s0)) and np.all(np.isfinite(s1))):
        raise InvariantDPError("the audited statistics must be finite.")
    n = s0.size
    results = []
    # both orders: the claim is symmetric in the two inputs
    for a, b in ((s0, s1), (s1, s0)):
        k1, k2 = _threshold_tests(a, b)
        if k1.size > 2 * max_tests:
            keep = np.unique(np.linspace(0, k1.size - 1, 2 * max_tests).astype(int))
            k1, k2 = k1[keep], k2[keep]
        results.append((k1, k2))
    k1 = np.concatenate([r[0] for r in results])
    k2 = np.concatenate([r[1] for r in results])
    level = significance / k1.size  # Bonferroni over tests; one tail each
    type1, type2 = k1 / n, k2 / n
    violation = f(1.0 - type1) - type2
    # conservative: the largest plausible type I (lower f) and type II
    sig = f(1.0 - _cp_upper(k1, n, level / 2)) - _cp_upper(k2, n, level / 2)
    worst = int(np.argmax(violation))
    return AuditResult(
        passed=bool(np.max(sig) <= 0.0),
        max_violation=float(violation[worst]),
        significant_violation=float(np.max(sig)),
        worst_type1=float(type1[worst]),
        worst_type2=float(type2[worst]),
        n_samples=n,
        n_tests=int(k1.size),
        claim=repr(f),
        significance=significance,
    )


def _release_value(out) -> np.ndarray:
    return np.asarray(getattr(out, "value", out), dtype=float)


def _apply_statistic(statistic, V: np.ndarray) -> np.ndarray:
    """A scalar per release: vectorised statistics take the whole ``(n, d)`` batch."""
    if getattr(statistic, "vectorized", False):
        out = np.asarray(statistic(V), dtype=float).reshape(-1)
    else:
        out = np.array([float(np.asarray(statistic(v), dtype=float).reshape(())) for v in V])
    if out.shape != (V.shape[0],):
        raise InvariantDPError(
            f"`statistic` must give one number per release, got shape {out.shape} "
            f"for {V.shape[0]} releases."
        )
    return out


def _default_claim(release) -> TradeoffFunction:
    if not hasattr(release, "guarantee"):
        raise InvariantDPError("give `claimed`: the mechanism does not return a Release.")
    g = release.guarantee
    if g.definition == "zCDP":
        return zcdp_tradeoff(g.params["rho"])
    return g.tradeoff()


def audit_mechanism(
    mechanism: Callable,
    x,
    x_prime,
    *,
    claimed=None,
    statistic: Callable | None = None,
    n_samples=20_000,
    significance=0.01,
    rng=None,
    batched: bool = False,
) -> AuditResult:
    """Audit a mechanism on a pair of neighbouring inputs.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(data, rng)`` returning a :class:`~invariantdp.Release`
        (or an array).  Each call must draw fresh noise from ``rng``.  With
        ``batched=True``: ``mechanism(data, n, rng)`` returning ``n``
        independent releases stacked along the first axis (an array of
        shape ``(n, ...)``).
    x, x_prime : array_like or DataFrame
        Neighbouring inputs.  For semi-DP, take invariant-conforming data sets
        at the semi-adjacent distance, e.g. ``x`` and ``x + v`` for a worst
        vector ``v`` of the sensitivity space (:func:`neighbour_from_space`).
    claimed : TradeoffFunction, optional
        The claim; by default the release's own guarantee
        (``release.guarantee.tradeoff()``, or :func:`zcdp_tradeoff` for a
        zCDP guarantee).  Required with ``batched=True``.
    statistic : callable, optional
        Maps a release value to a scalar (or, when it has an attribute
        ``vectorized = True`` like the statistics made by
        :func:`projection_statistic` and :func:`likelihood_ratio_statistic`,
        an ``(n, d)`` batch of flattened values to ``n`` scalars).  By default
        the value itself for a scalar release; otherwise the projection on
        ``x_prime - x`` when the inputs are arrays of the release's size, or
        on the difference of the mean releases estimated from an independent
        pilot sample of 10%.
    n_samples : int
        Releases drawn from each input.
    significance : float
        Family-wise probability of failing a correct mechanism.
    rng : None, int, SeedSequence or Generator
    batched : bool
        Whether ``mechanism`` draws ``n`` releases per call (see above).

    Returns
    -------
    AuditResult

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.audit import audit_mechanism
    >>> from invariantdp.mechanisms import odds_ratio_release
    >>> x = np.array([[12, 5], [4, 9]])
    >>> x_prime = x + np.array([[1, -1], [-1, 1]])
    >>> res = audit_mechanism(
    ...     lambda t, rng: odds_ratio_release(t, epsilon=1.0, rng=rng), x, x_prime,
    ...     n_samples=5000, rng=0)
    >>> res.passed
    True

    A batched sampler: the Laplace mechanism on ``n`` copies of a count.

    >>> from invariantdp.mechanisms import laplace
    >>> from invariantdp.privacy import eps_delta
    >>> res = audit_mechanism(
    ...     lambda t, n, rng: laplace(np.full(n, t), epsilon=1.0, rng=rng).value,
    ...     3.0, 4.0, claimed=eps_delta(1.0), n_samples=20_000, rng=0, batched=True)
    >>> res.passed
    True
    """
    n = check_positive_int("n_samples", n_samples, minimum=10)
    if not callable(mechanism):
        raise TypeError(f"`mechanism` must be callable, got {type(mechanism).__name__}.")
    if statistic is not None and not callable(statistic):
        raise TypeError(f"`statistic` must be callable, got {type(statistic).__name__}.")
    if batched and claimed is None:
        raise InvariantDPError("give `claimed` with `batched=True`: a batch carries no Release.")
    if claimed is not None:
        claimed = as_tradeoff(claimed)
    gen = as_generator(rng)

    if batched:

        def draw(data):
            out = np.asarray(mechanism(data, n, gen), dtype=float)
            if out.ndim == 0 or out.shape[0] != n:
                raise InvariantDPError(
                    f"a batched `mechanism` must return {n} releases along axis 0, "
                    f"got shape {out.shape}."
                )
            return out.reshape(n, -1), None

    else:

        def draw(data):
            vals = []
            first = None
            for _ in range(n):
                out = mechanism(data, gen)
                if first is None:
                    first = out
                vals.append(_release_value(out).ravel())
            return np.array(vals), first

    v0, rel = draw(x)
    v1, _ = draw(x_prime)
    if claimed is None:
        claimed = _default_claim(rel)
    if statistic is not None:
        s0, s1 = _apply_statistic(statistic, v0), _apply_statistic(statistic, v1)
    elif v0.shape[1] == 1:
        s0, s1 = v0[:, 0], v1[:, 0]
    else:
        diff = _difference(x, x_prime, v0.shape[1])
        if diff is not None:
            s0, s1 = v0 @ diff, v1 @ diff
        else:
            pilot = max(n // 10, 10)
            direction = v1[:pilot].mean(axis=0) - v0[:pilot].mean(axis=0)
            s0, s1 = v0[pilot:] @ direction, v1[pilot:] @ direction
    return audit_samples(s0, s1, claimed, significance=significance)


def _difference(x, x_prime, size: int) -> np.ndarray | None:
    """``x_prime - x`` flattened, when both are numeric arrays of ``size`` entries."""
    try:
        a = np.asarray(x, dtype=float).ravel()
        b = np.asarray(x_prime, dtype=float).ravel()
    except (TypeError, ValueError):
        return None
    if a.size != size or b.size != size:
        return None
    d = b - a
    return d if np.all(np.isfinite(d)) and np.any(d != 0) else None


# ---------------------------------------------------------------------------
# helpers: neighbours, statistics, claims
# ---------------------------------------------------------------------------


def neighbour_from_space(x, space, *, p=2, nonnegative=True) -> np.ndarray:
    r"""An invariant-conforming neighbour ``x + v`` with ``v`` a worst vector of ``space``.

    For semi-DP (Cho & Awan, Def. 13) the guarantee concerns data sets with
    the same invariants at the semi-adjacent distance ``a(t)``; their query
    values differ by an element of the sensitivity space ``S`` (e.g.
    :func:`~invariantdp.sensitivity.contingency_sensitivity_space`).  The
    hardest pair for an audit differs by a vector of largest norm: this
    returns ``x + v`` for the first ``v`` in ``S`` maximising
    :math:`\|v\|_p`, preferring (with ``nonnegative``) one that keeps all
    entries of ``x + v`` non-negative.

    Parameters
    ----------
    x : array_like
        The confidential query value (any shape; ``space`` rows are flattened
        C-order differences).
    space : array_like, shape (m, x.size)
        Sensitivity space, one difference vector per row.
    p : float or "inf"
        The norm in which the mechanism is calibrated (2 for Gaussian noise,
        1 for Laplace-type noise).
    nonnegative : bool
        Prefer neighbours with non-negative entries (counts).

    Returns
    -------
    numpy.ndarray
        ``x + v``, with the shape of ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.audit import neighbour_from_space
    >>> from invariantdp.sensitivity import contingency_sensitivity_space
    >>> x = np.array([[3, 0], [1, 5]])
    >>> neighbour_from_space(x, contingency_sensitivity_space(2, 2))
    array([[2., 1.],
           [2., 4.]])
    """
    from .sensitivity import _p

    xv = check_finite_array("x", x)
    if xv.size == 0:
        raise InvariantDPError("`x` must not be empty.")
    S = check_finite_array("space", space)
    if S.ndim != 2 or S.shape[0] == 0 or S.shape[1] != xv.size:
        raise InvariantDPError(
            f"`space` must be a non-empty 2-D array with {xv.size} columns (one flattened "
            f"difference per row), got shape {S.shape}."
        )
    norms = np.linalg.norm(S, ord=_p(p), axis=1)
    if not np.max(norms) > 0:
        raise InvariantDPError("`space` must contain a nonzero difference vector.")
    worst = np.flatnonzero(norms >= np.max(norms) * (1.0 - 1e-12))
    cand = xv.ravel()[None, :] + S[worst]
    if nonnegative:
        ok = np.flatnonzero(np.all(cand >= 0, axis=1))
        if ok.size:
            return cand[ok[0]].reshape(xv.shape)
    return cand[0].reshape(xv.shape)


def projection_statistic(direction) -> Callable:
    """Statistic ``v -> <v, direction>`` on flattened releases (vectorised).

    For spherical (or projected) Gaussian noise and inputs differing by
    ``direction``, the projection is the likelihood ratio statistic, hence
    the most powerful.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.audit import projection_statistic
    >>> projection_statistic([1.0, -1.0])(np.array([[3.0, 1.0], [0.0, 2.0]]))
    array([ 2., -2.])
    """
    d = check_finite_array("direction", direction).ravel()
    if d.size == 0 or not np.any(d != 0):
        raise InvariantDPError("`direction` must be a nonzero vector.")

    def stat(V):
        V = np.asarray(V, dtype=float)
        return V.reshape(-1, d.size) @ d

    stat.vectorized = True
    return stat


def likelihood_ratio_statistic(logpdf: Callable, x, x_prime) -> Callable:
    r"""Log likelihood ratio ``logpdf(v - x') - logpdf(v - x)`` of an additive mechanism.

    ``logpdf`` is the log density (or mass) of the noise, evaluated on an
    ``(n, d)`` batch of flattened noise vectors (e.g.
    ``KNormNoise.logpdf``, ``SubspaceNoise.logpdf`` or a scipy ``logpdf``
    summed over coordinates).  By the Neyman-Pearson lemma threshold tests
    on it trace the exact tradeoff curve of the two release laws, so an
    audit on it has the most power.  Points where both densities vanish get
    0; where one does, ``-inf``/``+inf`` are mapped to the finite extremes
    ``-1e300``/``1e300``.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> from invariantdp.audit import likelihood_ratio_statistic
    >>> lap = lambda V: stats.laplace.logpdf(V).sum(axis=1)
    >>> lr = likelihood_ratio_statistic(lap, [0.0], [1.0])
    >>> lr(np.array([[-3.0], [0.5], [4.0]]))
    array([-1.,  0.,  1.])
    """
    if not callable(logpdf):
        raise TypeError(f"`logpdf` must be callable, got {type(logpdf).__name__}.")
    a = check_finite_array("x", x).ravel()
    b = check_finite_array("x_prime", x_prime).ravel()
    if a.shape != b.shape or a.size == 0:
        raise InvariantDPError(
            f"`x` and `x_prime` must have the same non-zero size, got {a.size} and {b.size}."
        )

    def stat(V):
        V = np.asarray(V, dtype=float).reshape(-1, a.size)
        l1 = np.asarray(logpdf(V - b), dtype=float).reshape(-1)
        l0 = np.asarray(logpdf(V - a), dtype=float).reshape(-1)
        with np.errstate(invalid="ignore"):
            out = l1 - l0
        out = np.where(np.isneginf(l1) & np.isneginf(l0), 0.0, out)
        return np.clip(out, -1e300, 1e300)

    stat.vectorized = True
    return stat


class _ZCDP(TradeoffFunction):
    def __init__(self, rho: float, n_grid: int):
        self.rho = rho
        self.name = f"implied by rho-zCDP: rho={rho:g}"
        # (epsilon, delta(epsilon)) pairs of the CKS conversion on a grid of epsilon
        eps = np.concatenate([[0.0], np.geomspace(1e-3, rho + 40.0 * np.sqrt(rho) + 40.0, n_grid)])
        alpha = np.geomspace(1.0 + 1e-6, 1e6, 4000)[None, :]
        log_delta = (
            (alpha - 1.0) * (alpha * rho - eps[:, None])
            + (alpha - 1.0) * np.log1p(-1.0 / alpha)
            - np.log(alpha)
        )
        delta = np.minimum(np.exp(np.min(log_delta, axis=1)), 1.0)
        keep = delta < 1.0
        self.eps, self.delta = eps[keep], delta[keep]

    def __call__(self, alpha):
        a = np.asarray(alpha, dtype=float)
        flat = a.reshape(-1, 1)
        e, d = self.eps[None, :], self.delta[None, :]
        with np.errstate(over="ignore"):
            hi = 1.0 - d - np.exp(e) * (1.0 - flat)
        lo = np.exp(-e) * (flat - d)
        out = np.max(np.maximum(np.maximum(hi, lo), 0.0), axis=1).reshape(a.shape)
        return out[()] if out.ndim == 0 else out

    def __repr__(self) -> str:
        return f"zcdp_tradeoff(rho={self.rho!r})"


def zcdp_tradeoff(rho, *, n_grid=400) -> TradeoffFunction:
    r"""The tradeoff function implied by :math:`
    ho`-zCDP.

        :math:`
    ho`-zCDP implies :math:`(\epsilon, \delta(\epsilon))`-DP for every
        :math:`\epsilon \ge 0` with (Canonne, Kamath & Steinke 2020, Cor. 13)

        .. math:: \delta(\epsilon) = \inf_{lpha > 1}
                  rac{e^{(lpha-1)(lpha
    ho-\epsilon)}}{lpha}
                  \Big(1 - rac1lpha\Big)^{lpha-1},

        so the mechanism is ``f``-DP for the upper envelope
        :math:`f = \max_\epsilon f_{\epsilon,\delta(\epsilon)}` (taken on a grid
        of ``n_grid`` values of epsilon, which only weakens the claim).  This is
        the claim to audit a zCDP mechanism such as the discrete Gaussian, whose
        exact tradeoff curve is *not* :math:`G_{\Delta/\sigma}`.

        Examples
        --------
        >>> from invariantdp.audit import zcdp_tradeoff
        >>> from invariantdp.privacy import gaussian
        >>> f = zcdp_tradeoff(0.5)  # the Gaussian mechanism with mu = 1 is 0.5-zCDP
        >>> bool(f(0.9) <= gaussian(1.0)(0.9))
        True
    """
    rho = check_positive("rho", rho)
    n_grid = check_positive_int("n_grid", n_grid, minimum=10)
    return _ZCDP(rho, n_grid)
