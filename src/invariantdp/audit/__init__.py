r"""Empirical privacy audits: check a mechanism's claim by hypothesis testing.

A mechanism that is f-DP cannot be told apart from neighbouring inputs more
easily than ``f`` allows: for every test of ``M(x)`` against ``M(x')`` with
type I error ``1 - alpha`` the type II error is at least ``f(alpha)``
(Dong, Roth & Su 2022; Cho & Awan, Sec. 2.2).  The audit draws releases from
both inputs, runs threshold tests on statistics of the releases, bounds
their two error rates with Clopper-Pearson intervals, and reports the
largest violation of ``f``.  It passes unless some test is *significantly*
better than ``f`` allows (after a Bonferroni correction over the tests and
the statistics), so a correct mechanism passes with probability at least
``1 - significance``: every statistic of a release is a post-processing of
it, so no choice of statistic can make a correct mechanism fail more often.

Two kinds of statistics are run by :func:`audit_mechanism`:

* ``"threshold"`` -- a scalar statistic (the release itself, a projection,
  or a likelihood ratio): catches noise of the wrong *scale*.  Thresholds
  include far-tail quantiles, where an (epsilon, delta) claim is tight.
* ``"lattice"`` and ``"value"`` -- the achievable-output-set test of Mironov
  (2012), :func:`achievable_set_test`: outputs are sorted into classes by
  their low-order bits (:func:`lattice_classes`: the sign, the binade and
  the finest dyadic lattice ``2**v Z`` holding the double, or its exact bit
  pattern);
  classes that occur under one input and are impossible (or much rarer)
  under the other are found on half of the releases and tested on the
  other half.  This catches floating-point leaks that leave the *shape* of
  the noise intact, e.g. ``x + scale * (g + u)`` rounded in double
  precision.  An output with positive probability under ``x`` and none
  under ``x'`` violates epsilon-DP by a delta equal to that probability:
  :attr:`AuditResult.delta_lower` is a Clopper-Pearson lower bound on it.

The audit does not prove privacy; it catches claims that are wrong by more
than the sampling error.  :func:`audit_sample_size` computes how many
releases an audit needs to catch a given violation with a given power.

:func:`audit_timing` audits what a release reveals *besides* its value: it
times the calls of a mechanism on two neighbouring inputs, interleaved, and
tests events of the joint law of (value, run time) with thresholds fixed on
held-out calls (Jin, McMurtry, Rubinstein & Ohrimenko 2022), reporting a
lower bound on the privacy loss of the pair; :func:`audit_timing_samples`
runs the same tests on recorded pairs and :func:`timing_sample_size` gives
the calls an event needs.

Helpers for the inputs of an audit:

* :func:`neighbour_from_space` -- for semi-DP (Cho & Awan, Def. 13), an
  invariant-conforming neighbour ``x + v`` at the semi-adjacent distance,
  with ``v`` a worst (largest-norm) vector of the sensitivity space;
* :func:`projection_statistic` and :func:`likelihood_ratio_statistic` --
  scalar statistics of multivariate releases: the projection on the
  difference of the two inputs (optimal for spherical Gaussian noise) or the
  log likelihood ratio of the noise law (optimal for any law with a density,
  by the Neyman-Pearson lemma);
* :func:`~invariantdp.privacy.zcdp_tradeoff` -- the tradeoff function
  implied by rho-zCDP, to audit zCDP claims (the discrete Gaussian
  mechanism); its home is :mod:`invariantdp.privacy._zcdp`, and it is
  importable from here too;
* ``batched=True`` in :func:`audit_mechanism` -- a sampler that returns many
  releases per call (e.g. an additive mechanism applied to ``n`` copies of a
  scalar query), which makes audits with 10^4-10^7 releases fast.

The package, one module per concern (the public names are all importable
from :mod:`invariantdp.audit`):

* :mod:`._threshold` -- :class:`AuditResult`, :func:`audit_samples`;
* :mod:`._bit_lattice` -- :func:`lattice_classes`, :func:`achievable_set_test`;
* :mod:`._mechanism` -- :func:`audit_mechanism`;
* :mod:`._sample_size` -- :class:`AuditSampleSize`, :func:`audit_sample_size`,
  :func:`timing_sample_size`;
* :mod:`._timing` -- :class:`TimingAuditResult`, :func:`audit_timing`,
  :func:`audit_timing_samples`;
* :mod:`._statistics` -- :func:`neighbour_from_space`,
  :func:`projection_statistic`, :func:`likelihood_ratio_statistic`.

References
----------
.. [1] Mironov, I. (2012). "On significance of the least significant bits
   for differential privacy", ACM CCS, Sec. 3-5 (the achievable-output
   attack on floating-point Laplace noise, and snapping).
.. [2] Dong, J., Roth, A. and Su, W. (2022). "Gaussian differential
   privacy", JRSS-B 84(1) (tradeoff functions).
.. [3] Jagielski, M., Ullman, J. and Oprea, A. (2020). "Auditing
   differentially private machine learning", NeurIPS 33 (Clopper-Pearson
   lower bounds on epsilon and delta from threshold tests).
.. [4] Jin, J., McMurtry, E., Rubinstein, B. I. P. and Ohrimenko, O. (2022).
   "Are we there yet? Timing and floating-point attacks on differential
   privacy systems", IEEE S&P.
"""

from .._deprecation import moved_names
from ._bit_lattice import achievable_set_test, lattice_classes
from ._mechanism import audit_mechanism
from ._sample_size import TIMING_TESTS, AuditSampleSize, audit_sample_size, timing_sample_size
from ._statistics import likelihood_ratio_statistic, neighbour_from_space, projection_statistic
from ._threshold import STATISTICS, AuditResult, audit_samples
from ._timing import TimingAuditResult, audit_timing, audit_timing_samples

__all__ = [
    "STATISTICS",
    "TIMING_TESTS",
    "AuditResult",
    "AuditSampleSize",
    "TimingAuditResult",
    "achievable_set_test",
    "audit_mechanism",
    "audit_sample_size",
    "audit_samples",
    "audit_timing",
    "audit_timing_samples",
    "lattice_classes",
    "likelihood_ratio_statistic",
    "neighbour_from_space",
    "projection_statistic",
    "timing_sample_size",
]

# zcdp_tradeoff is a tradeoff function: its one home is invariantdp.privacy
__getattr__ = moved_names(__name__, {"zcdp_tradeoff": "invariantdp.privacy.zcdp_tradeoff"})
