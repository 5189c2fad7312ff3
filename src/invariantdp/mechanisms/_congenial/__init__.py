r"""Congenial privacy: additive mechanisms conditioned on their invariants.

Gong & Meng (2020) impose mandated disclosure on a differentially private
release by *conditioning* rather than by post-processing: the released
:math:`M^*(x)` has the law of :math:`M(x) \mid M(x) \in S^*`,

.. math:: S^* = \{ s : A s = a,\; B s \ge b \},

where :math:`A s = a` are the invariants (published exactly) and
:math:`B s \ge b` logical constraints such as non-negative counts (their
Eq. 2.3, Theorem 2.1).  For an additive mechanism with independent
coordinates the target is

.. math:: p^*(s) \propto \prod_i p_i(s_i - s^*_i)\, \mathbf 1(s \in S^*).

Samplers for it (:func:`conditional_release`, ``sampler=``):

``"exact"``
    independent draws from the target itself (:mod:`._exact_conditional`).  Integer
    noise (double geometric, discrete Gaussian) with a 0/1 invariant matrix
    and bounded-below cells (non-negativity, optional upper bounds) -- e.g.
    the 2 x 23 table of Section 3 -- by a dynamic programme over classes of
    identical columns of :math:`A`; closed forms otherwise: spherical
    Gaussian noise with equality invariants only is the projected Gaussian
    (Gao, Gong & Yu, Theorem 22); a one-dimensional fibre (e.g. Example 4.1,
    two Laplace bins with a fixed total, where
    :math:`m_1 - s_1 \sim \mathrm{Lap}(1/\epsilon)`) is sampled exactly
    along its line.
``"mis"``
    the paper's Metropolized independent sampler (Algorithm 1) with its
    proposal index set :math:`\mathcal I` and tuning parameter
    :math:`\tilde\epsilon`: the baseline (:mod:`._mcmc`).
``"gibbs"``
    heat-bath updates along kernel moves of :math:`A` -- exchanges
    :math:`e_i - e_j` between cells with identical columns of :math:`A`,
    and lifts of an integer lattice basis of the kernel of the collapsed
    matrix (for integer noise a chain on the integer fibre
    :math:`\{s \in \mathbb Z^d : A s = a\}`; the lattice algebra is
    :mod:`invariantdp._linalg._fibres`).  Each update draws the exact
    one-dimensional conditional along the move (a Metropolis-Hastings step
    whose proposal is the conditional itself, so its acceptance is 1);
    disjoint moves are updated together and chains are vectorised
    (:mod:`._mcmc`).

MCMC settings are named as in PyMC: ``draws``, ``tune``, ``chains``; the
diagnostics (:class:`SamplerDiagnostics`, :mod:`._diagnostics`) are ArviZ's
bulk ESS and rank-normalised R-hat.

The post-processing alternatives of Section 4, :func:`l2_postprocess` and
:func:`l1_postprocess` (:mod:`._postprocess`), are here for comparison (they
draw no noise).  The target and the inequalities are in :mod:`._targets`.

Every sampler draws from a numpy ``Generator`` in floating point (the exact
sampler too: its probabilities are floats), so a conditional release is a
**simulation, not for publication** (Mironov 2012 for float noise; a seed
makes it reproducible), and ``secure=True`` is refused; called with neither
``rng`` nor ``secure=False`` it warns
(:class:`~invariantdp.exceptions.SimulationWarning`).  For a release to
publish, use ``discrete_laplace_mechanism`` /
``discrete_gaussian_mechanism(x, ..., secure=True)`` (exact integer noise, not
conditioned on the invariants).

:func:`conditional_release` returns a :class:`ConditionalRelease`: a
:class:`~invariantdp.Release` that also carries the draws and the sampler's
diagnostics.

References
----------
R. Gong and X.-L. Meng (2020), *Congenial differential privacy under
mandated disclosure*, FODS '20, Sec. 2-4 and Appendices A-C.
J. Gao, R. Gong and F.-Y. Yu, *Subspace differential privacy*, Sec. 4,
Theorem 22 and Appendix D.
"""

from __future__ import annotations

from ..._deprecation import moved_names
from ._conditional import ConditionalRelease, conditional_release
from ._diagnostics import SamplerDiagnostics
from ._postprocess import l1_postprocess, l1_privacy_level, l2_postprocess
from ._targets import LinearInequalities

__all__ = [
    "ConditionalRelease",
    "LinearInequalities",
    "SamplerDiagnostics",
    "conditional_release",
    "l1_postprocess",
    "l1_privacy_level",
    "l2_postprocess",
]

__getattr__ = moved_names(
    "invariantdp.mechanisms.congenial",
    {"ConvergenceWarning": "invariantdp.exceptions.ConvergenceWarning"},
)
