r"""Samplers for latent confidential counts under invariants.

Two ways to integrate over the confidential counts ``s`` behind a release:

**Exact (data augmentation on the integer fibre).**  The counts are a latent
integer vector constrained to the fibre ``F = {s in Z^n_{>=0} : C s = c}`` of
the invariants.  :class:`LatticeMetropolis` is a PyMC step method that moves
``s`` along a *Markov basis* of ``ker C ∩ Z^n`` -- ``s' = s + t m`` for a
basis move ``m``, a random sign and a step ``t in {1, .., max_step}`` --
and accepts with the Metropolis-Hastings ratio of the full model density.
The proposal is symmetric and never leaves the fibre, so the chain targets
the exact posterior of ``(theta, s)``; PyMC's NUTS updates the continuous
parameters ``theta`` given ``s`` in the same compound step (the data
augmentation of Ju, Awan, Gong & Rao 2022).  :class:`LatticeMoves` builds the
basis:

* cells whose columns of ``C`` are identical (the cells of one group of
  ``totals`` / ``nested_totals``) are exchangeable: the swap ``e_i - e_j``;
* between those classes, the circuits of the class-level matrix, lifted to a
  random cell of each class -- for the 2 x 23 table of Gong & Meng (Section 3)
  with total, female total and voting-age total this is the 2 x 2 move
  ``e_a - e_b - e_c + e_d`` across (sex, voting age) classes;
* for the one-way margins of a two-way table, the basic moves
  ``e_ij - e_il - e_kj + e_kl`` (Diaconis & Sturmfels 1998).

For matrices whose circuits are 0/±1 (totally unimodular ``C``: totals,
nested totals, two-way margins, and every set of "group total" invariants
where each cell is in at most one group of each of two families) these moves
connect the non-negative fibre, so the chain is irreducible.

**Continuous relaxation.**  :func:`affine_counts` parameterises the counts on
the invariant affine space, ``s = s_0 + Q_N z`` with ``z in R^{n - rank C}``
free, so NUTS samples ``z`` and the invariants hold exactly.  The count
model's log mass is evaluated at real ``s`` through ``lgamma`` and the
mechanism likelihood at real ``s``.  This is adequate when

1. every latent count stays well away from zero under the posterior -- at
   least three posterior standard deviations (the relaxed density has a hard
   wall at ``s_i = 0``, which NUTS reports as divergences), and
2. each count's posterior standard deviation is at least about one half:
   then sums over the integer lattice equal integrals up to a relative error
   of order ``exp(-2 pi^2 sd^2)`` (Poisson summation; about ``7e-3`` at
   ``sd = 1/2`` and ``3e-9`` at ``sd = 1``), and
3. the mechanism density is smooth in ``s`` (Gaussian, projected Gaussian,
   Laplace, discrete Laplace interpolated); the Tulap density is piecewise
   constant in ``s``, so use the exact sampler or the marginal binomial model.

Large counts with noise scale of order one or more (county populations,
released with the projected Gaussian or Laplace mechanisms) satisfy all three;
the small cells of the 2 x 23 table do not satisfy (1).

References
----------
Ju, N., Awan, J., Gong, R. and Rao, V. (2022). "Data augmentation MCMC for
Bayesian inference from privatized data", NeurIPS 35.
Diaconis, P. and Sturmfels, B. (1998). "Algebraic algorithms for sampling
from conditional distributions", Ann. Statist. 26.
Gong, R. and Meng, X.-L. (2020). "Congenial differential privacy under
mandated disclosure", Sections 2.3 and 3.
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt

from ..._validation import InvariantDPError
from ._moves import LatticeMoves, fibre_point
from ._steps import DirichletGibbs, LatticeMetropolis

__all__ = [
    "DirichletGibbs",
    "LatticeMetropolis",
    "LatticeMoves",
    "affine_counts",
    "fibre_point",
]


# ---------------------------------------------------------------------------
# continuous relaxation
# ---------------------------------------------------------------------------


def affine_counts(invariants, base_point, z):
    r"""Counts on the invariant affine space: ``s = s_0 + Q_N z`` (a PyTensor expression).

    Parameters
    ----------
    invariants : Invariants
        ``C`` (the null-space basis ``Q_N`` comes from
        :meth:`Invariants.null_space_basis`).
    base_point : array_like, shape (n,)
        A point with ``C s_0 = c`` (e.g. from :func:`fibre_point`).
    z : tensor, shape (n - rank C,)
        Free coordinates (sampled by NUTS).

    Returns
    -------
    TensorVariable, shape (n,)

    Notes
    -----
    ``Q_N`` is orthonormal, so the map ``z -> s`` has a constant Jacobian and
    a density in ``s`` on the affine space is the same density in ``z``.
    See the module docstring for when the relaxation is adequate.

    References
    ----------
    Gao, Gong & Yu, Theorem 22 (given the invariants, the confidential
    counts lie on the affine space ``{C s = c}``).

    Examples
    --------
    >>> import numpy as np, pytensor.tensor as pt
    >>> from invariantdp.invariants import totals
    >>> from invariantdp.inference.bayes._latent_samplers import affine_counts
    >>> s = affine_counts(totals([0, 0, 0]), np.array([1.0, 2.0, 3.0]), pt.as_tensor([0.5, -0.2]))
    >>> round(float(s.sum().eval()), 12)
    6.0
    """
    QN = np.asarray(invariants.null_space_basis(), dtype=float)
    s0 = np.asarray(base_point, dtype=float).reshape(-1)
    if s0.size != QN.shape[0]:
        raise InvariantDPError(f"`base_point` must have {QN.shape[0]} cells, got {s0.size}.")
    return pt.as_tensor(s0) + pt.dot(QN, z)
