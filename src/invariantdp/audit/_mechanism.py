r"""Audit of a mechanism: draw releases from two inputs and run every statistic.

:func:`audit_mechanism` draws the releases (one per call, or a batch), picks
the scalar statistic of the threshold tests (:mod:`._threshold`), runs the
achievable-set tests (:mod:`._bit_lattice`) on the coordinates where the inputs
differ, and combines the verdicts with a Bonferroni correction over the
statistics.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .._progress import progress_bar, show_progress
from .._rng import as_generator
from .._validation import InvariantDPError, check_in_open_unit, check_positive_int
from ..privacy import TradeoffFunction, as_tradeoff
from ._bit_lattice import achievable_set_test
from ._threshold import STATISTICS, AuditResult, _claim_epsilon, audit_samples


def _release_value(out) -> np.ndarray:
    return np.asarray(getattr(out, "value", out), dtype=float)


def _apply_statistic(statistic, V: np.ndarray) -> np.ndarray:
    r"""A scalar per release: vectorised statistics take the whole ``(n, d)`` batch."""
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
    return release.guarantee.tradeoff()


def _check_statistics(statistics) -> tuple[str, ...]:
    names = (statistics,) if isinstance(statistics, str) else statistics
    if not isinstance(names, Sequence) or len(names) == 0:
        raise InvariantDPError(
            f"`statistics` ({statistics!r}) must be a non-empty sequence of names from "
            f"{STATISTICS}."
        )
    names = tuple(names)
    bad = [s for s in names if s not in STATISTICS]
    if bad or len(set(names)) != len(names):
        raise InvariantDPError(
            f"`statistics` ({statistics!r}) must list distinct names from {STATISTICS}."
        )
    return names


def _combine(parts: list[AuditResult], significance: float, n: int) -> AuditResult:
    r"""One verdict from several statistics, each audited at ``significance / len(parts)``."""
    if len(parts) == 1:
        return parts[0]
    worst = max(parts, key=lambda r: r.significant_violation)
    return AuditResult(
        passed=all(r.passed for r in parts),
        max_violation=worst.max_violation,
        significant_violation=worst.significant_violation,
        worst_type1=worst.worst_type1,
        worst_type2=worst.worst_type2,
        n_samples=n,
        n_tests=sum(r.n_tests for r in parts),
        claim=worst.claim,
        significance=significance,
        statistic=worst.statistic,
        epsilon=worst.epsilon,
        # Bonferroni over the statistics: every bound holds at the family-wise level
        delta_lower=max(r.delta_lower for r in parts),
        delta_claimed=worst.delta_claimed,
        components=tuple(parts),
    )


def audit_mechanism(
    mechanism: Callable,
    x,
    x_prime,
    *,
    claimed=None,
    statistic: Callable | None = None,
    statistics=STATISTICS,
    n_samples=20_000,
    significance=0.01,
    max_tests=400,
    epsilon=None,
    rng=None,
    batched: bool = False,
    progress=None,
) -> AuditResult:
    r"""Audit a mechanism on a pair of neighbouring inputs.

    Draws ``n_samples`` releases from each input and runs every statistic
    in ``statistics``, each at level ``significance / len(statistics)``:

    * ``"threshold"``: the threshold tests of :func:`audit_samples` on a
      scalar statistic (``statistic``, or the default described below).
      Catches noise of the wrong scale.
    * ``"lattice"``: :func:`achievable_set_test` on the sign, binade and
      finest dyadic lattice of each output (its low-order bits).  Catches
      floating-point leaks: the floating-point mechanisms of this package
      (``secure=False``) fail it on small data such as 0 and 1.
    * ``"value"``: :func:`achievable_set_test` on the exact outputs.
      Catches outputs on a grid that depends on the data, and mechanisms
      that return the data.

    For a multivariate release the achievable-set tests look at the
    coordinates where ``x`` and ``x_prime`` differ (when both are arrays of
    the release's size), otherwise at all coordinates.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(data, rng)`` returning a :class:`~invariantdp.Release`
        (or an array).  Each call must draw fresh noise from ``rng``.  With
        ``batched=True``: ``mechanism(data, n, rng)`` returning ``n``
        independent releases stacked along the first axis (an array of
        shape ``(n, ...)``).  A secure sampler ignores ``rng``.
    x, x_prime : array_like or DataFrame
        Neighbouring inputs.  For semi-DP, take invariant-conforming data sets
        at the semi-adjacent distance, e.g. ``x`` and ``x + v`` for a worst
        vector ``v`` of the sensitivity space (:func:`neighbour_from_space`).
    claimed : TradeoffFunction, optional
        The claim; by default the release's own guarantee
        (``release.guarantee.tradeoff()``: :func:`~invariantdp.privacy.zcdp_tradeoff` for a
        zCDP guarantee).  Required with ``batched=True``.
    statistic : callable, optional
        The scalar statistic of ``"threshold"``: maps a release value to a
        scalar (or, when it has an attribute ``vectorized = True`` like the
        statistics made by :func:`projection_statistic` and
        :func:`likelihood_ratio_statistic`, an ``(n, d)`` batch of flattened
        values to ``n`` scalars).  By default the value itself for a scalar
        release (the likelihood ratio statistic for Laplace, Gaussian and
        Tulap noise); otherwise the projection on ``x_prime - x`` when the
        inputs are arrays of the release's size, or on the difference of the
        mean releases estimated from an independent pilot sample of 10%.
    statistics : sequence of {"threshold", "lattice", "value"}
        The statistics to run (default: all three, :data:`STATISTICS`).
        ``("threshold",)`` audits only the noise scale, e.g. of a
        floating-point simulation.
    n_samples : int
        Releases drawn from each input (the achievable-set tests use half
        of them to find the classes and test on the other half).
    significance : float
        Family-wise probability of failing a correct mechanism.
    max_tests : int
        Thresholds per statistic (see :func:`audit_samples`).
    epsilon : float, optional
        Where the empirical delta lower bound is reported (default: the
        claim's epsilon, or 0).
    rng : None, int, SeedSequence or Generator
    batched : bool
        Whether ``mechanism`` draws ``n`` releases per call (see above).
    progress : bool, optional
        Show a progress bar while drawing one release per call (default: in a
        terminal or a notebook, not under CI).

    Returns
    -------
    AuditResult
        With one component per statistic in ``components``.

    Notes
    -----
    Sample sizes, releases per input for 90% power at significance 0.01
    (:func:`audit_sample_size`; checked by simulation in the test suite):

    * a Gaussian mechanism with ``sigma = 3.19`` claiming ``(1, 1e-5)``-DP
      (which needs ``sigma = 3.7306``; its true delta is ``9.8e-5``, ten
      times the claim): ``2.36e7`` with the threshold statistic alone;
    * the same mechanism against the GDP claim ``mu = 0.268`` (the curve
      ``G_mu`` whose delta at epsilon = 1 is ``1e-5``): ``9.3e4``;
    * ``sigma = 2.575`` claiming ``(1, 1e-5)`` (true delta ``1e-3``):
      ``1.26e6``;
    * a floating-point leak that makes a fraction ``p`` of the outputs
      impossible under the neighbour (pure DP, epsilon = 1, all three
      statistics): about ``200 / p`` (measured: caught 10 times in 10 at
      ``200 / p``, 4 in 10 at ``100 / p``).

    For an (epsilon, delta) claim the gap between the curves lies in the far
    tail (type I errors near delta), which is why ``delta`` violations need
    so many releases; the numbers for the threshold statistic alone hold
    with ``statistics=("threshold",)`` (with all three statistics, about 8%
    more).

    References
    ----------
    Jagielski, Ullman & Oprea (2020), "Auditing differentially private
    machine learning", NeurIPS 33 (Clopper-Pearson bounds from threshold
    tests); Dong, Roth & Su (2022), JRSS-B 84(1) (tradeoff functions);
    Mironov (2012), "On significance of the least significant bits for
    differential privacy", ACM CCS (the achievable-output attack).

    Examples
    --------
    The exact (integer) discrete Laplace mechanism, simulated, on ``n``
    copies of a count: it passes all three statistics.

    >>> import numpy as np
    >>> from invariantdp.audit import audit_mechanism
    >>> from invariantdp.mechanisms import discrete_laplace_mechanism
    >>> from invariantdp.privacy import eps_delta
    >>> res = audit_mechanism(
    ...     lambda t, n, rng: discrete_laplace_mechanism(np.full(n, t), epsilon=1.0, rng=rng).value,
    ...     3, 4, claimed=eps_delta(1.0), n_samples=20_000, rng=0, batched=True)
    >>> res.passed
    True

    Floating-point Laplace noise, ``x + rng.laplace()``, on 0 and 1 has the
    right scale (the threshold statistic passes) but leaks through its
    low-order bits:

    >>> float_laplace = lambda t, n, rng: t + rng.laplace(0.0, 1.0, n)
    >>> res = audit_mechanism(
    ...     float_laplace, 0.0, 1.0, claimed=eps_delta(1.0), n_samples=4000, rng=0, batched=True)
    >>> res.passed, res.statistic
    (False, 'lattice')
    >>> [(c.statistic, c.passed) for c in res.components]
    [('threshold', True), ('lattice', False), ('value', True)]

    A 2 x 2 table released through the Tulap odds-ratio mechanism, each
    call returning a :class:`~invariantdp.Release` whose guarantee is the
    claim; a seeded release is a floating-point simulation, so only its
    noise scale is audited:

    >>> from invariantdp.mechanisms import odds_ratio_release
    >>> x = np.array([[12, 5], [4, 9]])
    >>> x_prime = x + np.array([[1, -1], [-1, 1]])
    >>> res = audit_mechanism(
    ...     lambda t, rng: odds_ratio_release(t, epsilon=1.0, rng=rng), x, x_prime,
    ...     statistics=("threshold",), n_samples=2000, rng=0)
    >>> res.passed
    True
    """
    n = check_positive_int("n_samples", n_samples, minimum=20)
    show_progress(progress)  # its type, before any work
    if not callable(mechanism):
        raise TypeError(f"`mechanism` must be callable, got {type(mechanism).__name__}.")
    if statistic is not None and not callable(statistic):
        raise TypeError(f"`statistic` must be callable, got {type(statistic).__name__}.")
    names = _check_statistics(statistics)
    if batched and claimed is None:
        raise InvariantDPError("give `claimed` with `batched=True`: a batch carries no Release.")
    if claimed is not None:
        claimed = as_tradeoff(claimed)
    significance = check_in_open_unit("significance", significance)
    max_tests = check_positive_int("max_tests", max_tests, minimum=2)
    if epsilon is not None:
        _claim_epsilon(claimed, epsilon)
    gen = as_generator(rng)

    if batched:

        def draw(data, bar):
            out = np.asarray(mechanism(data, n, gen), dtype=float)
            if out.ndim == 0 or out.shape[0] != n:
                raise InvariantDPError(
                    f"a batched `mechanism` must return {n} releases along axis 0, "
                    f"got shape {out.shape}."
                )
            return out.reshape(n, -1), None

    else:

        def draw(data, bar):
            vals = []
            first = None
            for _ in range(n):
                out = mechanism(data, gen)
                if first is None:
                    first = out
                vals.append(_release_value(out).ravel())
                bar.update(1)
            return np.array(vals), first

    # one release per call is the slow case: it gets a bar (2 n calls of the mechanism)
    with progress_bar(0 if batched else 2 * n, progress, desc="audit", unit="release") as bar:
        v0, rel = draw(x, bar)
        v1, _ = draw(x_prime, bar)
    if claimed is None:
        claimed = _default_claim(rel)
    share = significance / len(names)
    diff = _difference(x, x_prime, v0.shape[1])
    parts = []
    for name in names:
        if name == "threshold":
            s0, s1 = _threshold_statistic(statistic, v0, v1, diff, n)
            res = audit_samples(
                s0, s1, claimed, significance=share, max_tests=max_tests, epsilon=epsilon
            )
        else:
            cols = np.flatnonzero(diff) if diff is not None else slice(None)
            res = achievable_set_test(
                v0[:, cols],
                v1[:, cols],
                claimed,
                classes=name,
                significance=share,
                max_tests=max_tests,
                epsilon=epsilon,
            )
        parts.append(res)
    return _combine(parts, significance, n)


def _threshold_statistic(statistic, v0, v1, diff, n):
    if statistic is not None:
        return _apply_statistic(statistic, v0), _apply_statistic(statistic, v1)
    if v0.shape[1] == 1:
        return v0[:, 0], v1[:, 0]
    if diff is not None:
        return v0 @ diff, v1 @ diff
    pilot = max(n // 10, 10)
    direction = v1[:pilot].mean(axis=0) - v0[:pilot].mean(axis=0)
    return v0[pilot:] @ direction, v1[pilot:] @ direction


def _difference(x, x_prime, size: int) -> np.ndarray | None:
    r"""``x_prime - x`` flattened, when both are numeric arrays of ``size`` entries."""
    try:
        a = np.asarray(x, dtype=float).ravel()
        b = np.asarray(x_prime, dtype=float).ravel()
    except (TypeError, ValueError):
        return None
    if a.size != size or b.size != size:
        return None
    with np.errstate(invalid="ignore", over="ignore"):
        d = b - a
    return d if np.all(np.isfinite(d)) and np.any(d != 0) else None
